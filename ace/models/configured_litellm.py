"""litellm, configured for ace: the one place it is imported. Import it from here, inside the
function that needs it (`from ace.models.configured_litellm import litellm`): loading litellm
takes seconds, and only the code paths that call a provider should pay for it.

Before the import, litellm is told to read the model price map packaged with it
(`LITELLM_LOCAL_MODEL_COST_MAP`, unless the environment already says otherwise), so importing it
never downloads one; after it, its "Give Feedback / Get Help" banner, which would follow every
error, is switched off.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

litellm.suppress_debug_info = True

__all__ = ["litellm"]
