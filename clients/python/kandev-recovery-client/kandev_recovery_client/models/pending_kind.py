from enum import StrEnum


class PendingKind(StrEnum):
    RESET_WAIT = "reset_wait"
    RETRY = "retry"
    SWITCH = "switch"

    def __str__(self) -> str:
        return str(self.value)
