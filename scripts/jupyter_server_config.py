# A throw-away, loopback-only JupyterLab for browser tests and benchmarks (see scripts/labkit.py).
# Usage: jupyter lab --config scripts/jupyter_server_config.py, with JLAB_RUN (state dir), JLAB_PORT,
# JLAB_TOKEN and JLAB_NOTEBOOK_DIR set by labkit. JupyterLab's own settings stay at their defaults.
import os

c = get_config()  # noqa: F821  (injected by the traitlets config loader)

RUN = os.environ["JLAB_RUN"]

c.ServerApp.ip = "127.0.0.1"  # loopback only
c.ServerApp.port = int(os.environ["JLAB_PORT"])
c.ServerApp.port_retries = 0  # fail rather than silently pick another port
c.ServerApp.open_browser = False
c.ServerApp.allow_root = os.geteuid() == 0  # the server refuses to run as root otherwise
c.ServerApp.root_dir = os.environ["JLAB_NOTEBOOK_DIR"]  # a scratch copy: the UI never rewrites sources
c.IdentityProvider.token = os.environ["JLAB_TOKEN"]

c.LabApp.workspaces_dir = os.path.join(RUN, "workspaces")
c.LabApp.user_settings_dir = os.path.join(RUN, "user-settings")
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
c.LabApp.expose_app_in_browser = True  # window.jupyterapp: run JupyterLab commands from tests

# Server extensions to turn off (comma-separated), e.g. to see JupyterLab without nbagent's save hook.
_disabled = [name for name in os.environ.get("JLAB_DISABLE_EXTENSIONS", "").split(",") if name]
if _disabled:
    c.ServerApp.jpserver_extensions = {name: False for name in _disabled}
