"""The baseline file, its history, the gate's rules and verdicts, atomic writes."""
