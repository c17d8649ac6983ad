"""The deterministic simulator: the same controller and broker code on virtual time, with a simulated store
and network, injected faults, and named invariants checked as it runs (docs/simulator.md)."""
