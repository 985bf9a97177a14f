"""The table service: the single writer of each table's hand log."""
