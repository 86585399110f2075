from enum import StrEnum


class ItemType3Kind(StrEnum):
    ACP_STOP = "acp_stop"

    def __str__(self) -> str:
        return str(self.value)
