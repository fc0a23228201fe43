def shout(data: bytes) -> bytes:
    return data.upper()
