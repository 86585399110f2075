from enum import StrEnum


class ItemType2Kind(StrEnum):
    ACP_UPDATE = "acp_update"

    def __str__(self) -> str:
        return str(self.value)
