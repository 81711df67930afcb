"""Ordered boundary levels: a higher level is a better place to cut."""
from enum import IntEnum


class Level(IntEnum):
    UNIT = 0  # between two tokens / characters (may split a word)
    WORD = 1  # whitespace, or between CJK characters
    SENTENCE = 2
    LINE = 3
    ITEM = 4  # list item, table row group, Q&A pair, transcript turn, field block
    BLOCK = 5  # paragraph / top-level block
    SECTION = 6
    END = 7  # end of the packed region

    @property
    def label(self) -> str:
        return self.name.lower()
