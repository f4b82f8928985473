"""The model-behaviour stage: a team's tasks, run by a model against two SDK versions of its server, compared."""
