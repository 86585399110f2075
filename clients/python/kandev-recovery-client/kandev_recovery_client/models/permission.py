from enum import StrEnum


class Permission(StrEnum):
    ADMIN = "admin"
    CATALOGUEREAD = "catalogue:read"
    EVIDENCESUBMIT = "evidence:submit"
    OFFICEASSIGN = "office:assign"
    PROFILESMANAGE = "profiles:manage"
    PROFILESSELECT = "profiles:select"
    ROUTESACT = "routes:act"
    ROUTESANY = "routes:any"

    def __str__(self) -> str:
        return str(self.value)
