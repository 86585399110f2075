from enum import StrEnum


class RouteOutcomeType3Kind(StrEnum):
    NOW = "now"

    def __str__(self) -> str:
        return str(self.value)
