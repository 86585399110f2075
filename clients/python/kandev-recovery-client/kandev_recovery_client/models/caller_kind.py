from enum import StrEnum


class CallerKind(StrEnum):
    KANBAN = "kanban"
    OFFICE = "office"
    UTILITY = "utility"
    WORKFLOW = "workflow"

    def __str__(self) -> str:
        return str(self.value)
