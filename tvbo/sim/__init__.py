"""The virtual-clock simulator: engine, compute models, hardware profiles, work accounting."""
