"""RL schedulers (thesis 3.2): a numpy agent picks a policy pair at each decision of the twin.

- `env`: observations, rewards and the twin's decision hook (`RLScheduler`);
- `nets`, `agents`: MLPs with Adam; REINFORCE, actor-critic, tabular epsilon-greedy;
- `training`: episodes over training windows, curves, saving/loading `.npz` agents.
"""
