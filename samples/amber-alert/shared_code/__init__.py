"""Code shared by the AMBER Alert functions (imported as `from ..shared_code import amber`)."""
