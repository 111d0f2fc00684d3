"""The UI-agnostic agent loop: streaming tool-call parser, events, trajectory."""
