"""Greetings."""


def hello(name: str) -> str:
    """Return a greeting for name."""
    return "Hello, " + name


def shout(name: str) -> str:
    return hello(name).upper()
