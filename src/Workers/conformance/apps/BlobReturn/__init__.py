"""Returns its blob input reversed, to a blob $return."""


def main(inputblob: bytes) -> bytes:
    return inputblob[::-1]
