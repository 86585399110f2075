from enum import StrEnum


class DecisionKind(StrEnum):
    EFFECT_UNSAFE = "effect_unsafe"
    LATE_EFFECT = "late_effect"
    NOT_PROVIDER = "not_provider"
    RETRY = "retry"
    RETURNED = "returned"
    SKIP = "skip"
    STALE = "stale"
    STOP = "stop"
    UNCLASSIFIED = "unclassified"
    WAIT_FOR_RESET = "wait_for_reset"

    def __str__(self) -> str:
        return str(self.value)
