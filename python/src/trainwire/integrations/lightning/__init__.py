"""PyTorch Lightning integration: the callback (`TrainwireCallback`) and the logger
(`TrainwireLogger`), alone or together in one trainer writing one run.

```python
from trainwire.integrations.lightning import TrainwireCallback, TrainwireLogger
```
"""

from trainwire.integrations.lightning.callback import CHECKPOINT_KEY, STOP_CHECKPOINT, TrainwireCallback
from trainwire.integrations.lightning.logger import VALIDATION_PREFIXES, TrainwireLogger

__all__ = ["CHECKPOINT_KEY", "STOP_CHECKPOINT", "VALIDATION_PREFIXES", "TrainwireCallback", "TrainwireLogger"]
