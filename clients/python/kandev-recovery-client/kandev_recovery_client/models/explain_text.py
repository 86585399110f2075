from enum import StrEnum


class ExplainText(StrEnum):
    AGENT = "agent"
    ERROR = "error"
    TOOL = "tool"

    def __str__(self) -> str:
        return str(self.value)
