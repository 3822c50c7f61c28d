"""What happens to memories over time: dedup and contradiction on write, aging, access counts,
pruning and history."""
