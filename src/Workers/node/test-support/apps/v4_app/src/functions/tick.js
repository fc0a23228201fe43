'use strict';
/** tick: a timer trigger every 5 minutes; writes what it saw to blob ticks/last.json (an object: JSON). */
const { app, output } = require('@azure/functions');

const last = output.storageBlob({ path: 'ticks/last.json', connection: 'AzureWebJobsStorage' });

app.timer('tick', {
  schedule: '0 */5 * * * *',
  extraOutputs: [last],
  handler: (timer, context) => {
    context.extraOutputs.set(last, { isPastDue: timer.isPastDue, adjustForDST: timer.schedule.adjustForDST, function: context.functionName });
  },
});
