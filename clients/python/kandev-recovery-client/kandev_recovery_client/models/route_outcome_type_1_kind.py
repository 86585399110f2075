from enum import StrEnum


class RouteOutcomeType1Kind(StrEnum):
    SWITCHING = "switching"

    def __str__(self) -> str:
        return str(self.value)
