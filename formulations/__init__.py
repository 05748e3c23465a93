"""optkit's formulations: one package per paper problem, each registered with the engine
through the ``optkit.formulations`` entry point group."""
