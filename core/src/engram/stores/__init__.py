"""What the core does about stores: the shared checks, damage, recovery, migration, origins."""
