from enum import StrEnum


class ItemType1Kind(StrEnum):
    ACP_ERROR = "acp_error"

    def __str__(self) -> str:
        return str(self.value)
