from enum import StrEnum


class DispatchReason(StrEnum):
    RESET_RETRY = "reset_retry"
    RETRY = "retry"
    SWITCH = "switch"

    def __str__(self) -> str:
        return str(self.value)
