from enum import StrEnum


class Prefer(StrEnum):
    FIRST_ELIGIBLE = "first_eligible"
    STAY = "stay"

    def __str__(self) -> str:
        return str(self.value)
