'use strict';
/**
 * One Azure Storage queue message's trigger metadata, shared by the tests of queue triggers: as the host sends it
 * (TypedData, PascalCase keys, dates as JSON strings) and as a function sees it (bindingData in the function.json
 * model, triggerMetadata in the v4 model: camelCased, dates as text).
 */

const ID = '6c3a2f0e-1b7d-4c9a-9a53-0d5b1f3b2a11';
const DEQUEUE_COUNT = 2;
const INSERTION_TIME = '2026-11-29T10:00:00+00:00';
const EXPIRATION_TIME = '2026-12-06T10:00:00+00:00';
const NEXT_VISIBLE_TIME = '2026-11-29T10:10:00+00:00';
const POP_RECEIPT = 'AgAAAAMAAAAAAAAA';

/**
 * The trigger metadata of a queue message holding `text`, as the host sends it.
 * @param {string} text
 */
function hostQueueMetadata(text) {
  return {
    QueueTrigger: { string: text },
    Id: { string: ID },
    DequeueCount: { int: DEQUEUE_COUNT },
    InsertionTime: { json: JSON.stringify(INSERTION_TIME) },
    ExpirationTime: { json: JSON.stringify(EXPIRATION_TIME) },
    NextVisibleTime: { json: JSON.stringify(NEXT_VISIBLE_TIME) },
    PopReceipt: { string: POP_RECEIPT },
  };
}

/**
 * The same metadata as the function sees it, with the message as `queueTrigger` (text, or the parsed JSON).
 * @param {unknown} queueTrigger
 */
function seenQueueMetadata(queueTrigger) {
  return {
    queueTrigger,
    id: ID,
    dequeueCount: DEQUEUE_COUNT,
    insertionTime: INSERTION_TIME,
    expirationTime: EXPIRATION_TIME,
    nextVisibleTime: NEXT_VISIBLE_TIME,
    popReceipt: POP_RECEIPT,
  };
}

module.exports = { hostQueueMetadata, seenQueueMetadata };
