"""The core every other part may use: files and atomic writes (``io``, ``npyfile``), the verified cache
(``cache``), environment and folders (``env``, ``paths``), device choice (``device``) and one-line errors
(``errors``). It imports nothing else from ``pate_study``."""
