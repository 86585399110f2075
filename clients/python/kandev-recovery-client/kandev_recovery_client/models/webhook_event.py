from enum import StrEnum


class WebhookEvent(StrEnum):
    CIRCUIT_CLOSED = "circuit.closed"
    CIRCUIT_OPENED = "circuit.opened"
    DISPATCH_DUE = "dispatch.due"
    ROUTE_ACTION_REQUIRED = "route.action_required"
    ROUTE_CANCELLED = "route.cancelled"
    ROUTE_COMPLETED = "route.completed"

    def __str__(self) -> str:
        return str(self.value)
