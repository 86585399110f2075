from enum import StrEnum


class RouteOutcomeType2Kind(StrEnum):
    WAITING = "waiting"

    def __str__(self) -> str:
        return str(self.value)
