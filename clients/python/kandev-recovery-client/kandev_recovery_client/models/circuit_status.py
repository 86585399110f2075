from enum import StrEnum


class CircuitStatus(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    PROBING = "probing"

    def __str__(self) -> str:
        return str(self.value)
