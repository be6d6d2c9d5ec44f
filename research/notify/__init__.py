"""Notifications when a run completes, fails or waits for plan review: signed JSON webhooks
(httpx) and Slack, Teams, e-mail... through Apprise, delivered in the background after the
run's end is stored, retried (tenacity), and recorded on the run (``docs/notifications.md``).

Modules: ``base`` (Target, Notification, Outcome, redaction), ``targets`` (parse, check,
the settings' and a run's targets, enabled events), ``seal`` (a run's targets encrypted for
Redis), ``payload`` (the run notification), ``webhook`` (signing, POST, retries),
``apprise_target`` (Apprise services), ``deliver`` (the background delivery and its records).
"""

from research.notify.deliver import deliver_run, run_ended, send, wait_idle

__all__ = ["deliver_run", "run_ended", "send", "wait_idle"]
