"""The two errors whose message is shown to the user as is (st.error in the app, one line in the CLI)."""


class InputError(ValueError):
    """Bad user input (a setting out of range, an empty prompt, an unknown method)."""


class ModelError(Exception):
    """A model or tokenizer could not be loaded or paired."""


def check_choice(what: str, value, choices) -> None:
    """InputError "unknown <what> '<value>' (choose from: a, b, ...)" unless value is one of choices."""
    if value not in choices:
        raise InputError(f"unknown {what} '{value}' (choose from: {', '.join(choices)})")
