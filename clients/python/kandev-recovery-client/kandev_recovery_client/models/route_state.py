from enum import StrEnum


class RouteState(StrEnum):
    ACTION_REQUIRED = "action_required"
    ACTIVE = "active"
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    RETRYING = "retrying"
    RETRY_WAIT = "retry_wait"
    SWITCHING = "switching"
    WAITING_FOR_RESET = "waiting_for_reset"

    def __str__(self) -> str:
        return str(self.value)
