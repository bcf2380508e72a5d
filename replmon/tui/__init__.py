"""The Textual UI: the only part of replmon that imports textual."""
