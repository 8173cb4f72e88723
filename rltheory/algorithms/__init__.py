"""Provable iterative and sample-based algorithms; each returns a result with a Trace.

Modules: policy_gradient, critics, q_learning, actor_critic, constrained,
average_reward, offline, multiagent. Public names are re-exported here.
"""

__all__: list[str] = []
