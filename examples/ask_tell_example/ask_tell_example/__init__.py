"""Example tvbo plugin package (see ``tvbo_plugin``): an outside ask/tell optimiser, wrapped."""
