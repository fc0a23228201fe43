'use strict';
/**
 * on_queue: a storage queue trigger on "orders". What the library handed the handler (the message and
 * context.triggerMetadata) goes to the "shipments" queue as an object (JSON); the return value goes to the
 * "audit" queue: a string for a text message, an array (one message each) for a JSON one.
 */
const { app, output } = require('@azure/functions');

const shipments = output.storageQueue({ queueName: 'shipments', connection: 'AzureWebJobsStorage' });

app.storageQueue('on_queue', {
  queueName: 'orders',
  connection: 'AzureWebJobsStorage',
  extraOutputs: [shipments],
  return: output.storageQueue({ queueName: 'audit', connection: 'AzureWebJobsStorage' }),
  handler: (message, context) => {
    context.extraOutputs.set(shipments, { message, triggerMetadata: context.triggerMetadata });
    return typeof message === 'string' ? `seen ${message}` : ['audit-1', 'audit-2'];
  },
});
