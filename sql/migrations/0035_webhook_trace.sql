-- webhook_outbox.trace is the W3C trace context (a traceparent header
-- value) of the request whose change queued the delivery, when that request
-- was traced: the delivery's span, however much later it is sent, is tied
-- to it, and the receiver is sent a traceparent of its own under it. NULL
-- when tracing is off or the change came from no traced request.
ALTER TABLE webhook_outbox ADD COLUMN trace text;
