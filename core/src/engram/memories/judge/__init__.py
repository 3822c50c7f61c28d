"""Judgment: whether a new memory repeats, refines or contradicts a known one."""
