from enum import StrEnum


class RouteOutcomeType0Kind(StrEnum):
    STOPPED = "stopped"

    def __str__(self) -> str:
        return str(self.value)
