"""tau-bench retail for skillforge: tools, a deterministic agent, and the tasks with their gold calls.

- ``bench.tau.tools``: the retail tools as plain top-level functions over an in-memory database
  (``fresh_db()``, ``use_world(db)``), plus ``TOOLS``, ``READS`` and the ``TOOLBOX`` the agent
  calls them through;
- ``bench.tau.agent``: a deterministic stand-in for a model that knows each task's gold writes;
- ``bench.tau.tasks``: the 635 tasks of ``bench/data/tau-retail/tasks.json``, gold replay and
  end-state comparison.

The protocol that runs them through ``skillforge.Forge`` is ``bench.tau_retail``.
"""
