from enum import StrEnum


class AuditAction(StrEnum):
    CIRCUIT_PROBED = "circuit.probed"
    CIRCUIT_RELEASED = "circuit.released"
    PERSON_ADDED = "person.added"
    PERSON_DISABLED = "person.disabled"
    PERSON_ENABLED = "person.enabled"
    PERSON_PERMISSIONS = "person.permissions"
    PERSON_REMOVED = "person.removed"
    PROFILE_CREATED = "profile.created"
    PROFILE_DELETED = "profile.deleted"
    PROFILE_UPDATED = "profile.updated"
    ROUTE_ACTION = "route.action"
    TOKEN_CREATED = "token.created"
    TOKEN_REVOKED = "token.revoked"
    WEBHOOK_CREATED = "webhook.created"
    WEBHOOK_REMOVED = "webhook.removed"

    def __str__(self) -> str:
        return str(self.value)
