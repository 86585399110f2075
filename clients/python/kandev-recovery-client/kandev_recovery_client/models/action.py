from enum import StrEnum


class Action(StrEnum):
    CANCEL = "cancel"
    RETRY_NOW = "retry_now"
    SKIP_NOW = "skip_now"
    STOP = "stop"

    def __str__(self) -> str:
        return str(self.value)
