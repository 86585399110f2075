from enum import StrEnum


class RouteOutcomeType4Kind(StrEnum):
    UNCHANGED = "unchanged"

    def __str__(self) -> str:
        return str(self.value)
