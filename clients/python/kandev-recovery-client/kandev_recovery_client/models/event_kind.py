from enum import StrEnum


class EventKind(StrEnum):
    ROUTE_ACTION = "route.action"
    ROUTE_AMBIGUOUS = "route.ambiguous"
    ROUTE_CANCELLED = "route.cancelled"
    ROUTE_COMPLETED = "route.completed"
    ROUTE_CREATED = "route.created"
    ROUTE_DISPATCH_ACKED = "route.dispatch_acked"
    ROUTE_EFFECT = "route.effect"
    ROUTE_FAILURE = "route.failure"
    ROUTE_FIRED = "route.fired"
    ROUTE_HELD = "route.held"
    ROUTE_LATE_EFFECT = "route.late_effect"
    ROUTE_RETURNED = "route.returned"
    ROUTE_SUCCESS = "route.success"
    ROUTE_UNCLAIMED = "route.unclaimed"

    def __str__(self) -> str:
        return str(self.value)
