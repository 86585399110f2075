from enum import StrEnum


class ExplainOutcome(StrEnum):
    CONFLICT = "conflict"
    RULE = "rule"
    UNMATCHED = "unmatched"

    def __str__(self) -> str:
        return str(self.value)
