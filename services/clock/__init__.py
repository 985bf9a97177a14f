"""The clock service: sends a timeout when a timed decision's deadline passes."""
