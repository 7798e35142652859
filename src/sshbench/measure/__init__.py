"""Taking measurements: which scenarios (plan), in what order and for how long (scheduler), one sample at a
time (samplers), with its CPU and memory costs (costs, memory). Never imports targets/ or store: servers
are seen through `costs.ServerView`, samples go to a `scheduler.Sink`."""
