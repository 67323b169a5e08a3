import type { ChannelType } from '../../db/types.js';
import type { NotificationBody } from '../../receiver/index.js';

/**
 * What each channel type is sent for one notification, from the body every webhook gets: Slack's incoming
 * webhook message, a Teams Workflows message with an Adaptive Card, a PagerDuty Events API v2 event.
 * Pure: the request shapes are the vendors' public ones (docs/notifications.md#channels).
 */

/**
 * The conditions of a return to good (a renewed certificate included): on PagerDuty they resolve the incident
 * the resource's trouble opened.
 */
const GOOD_STATES = new Set(['ALIVE', 'CONNECTED', 'HEALTHY', 'RENEWED']);
const CRITICAL = new Set(['UNREACHABLE', 'TERMINATED', 'UNHEALTHY', '100']);

/** Whether an event with this condition resolves a PagerDuty incident, whatever the alert's `alert_me`. */
export function resolvesIncident(condition: string): boolean {
  return GOOD_STATES.has(condition);
}

export function pagerDutySeverity(condition: string): 'critical' | 'warning' | 'info' {
  if (CRITICAL.has(condition)) return 'critical';
  return condition === '80' ? 'warning' : 'info';
}

export interface ChannelLinks {
  /** The notification in the console (or the notifications page, for a test). */
  console: string;
  /** PAGERDUTY_EVENTS_URL. */
  pagerDutyEvents: string;
}

/** How one kind of body is put to each channel type (a notification's, or an incident message's). */
export interface ChannelRenderers<Body> {
  slack(body: Body, links: ChannelLinks): unknown;
  teams(body: Body, links: ChannelLinks): unknown;
  pagerDuty(routingKey: string, body: Body, links: ChannelLinks): unknown;
}

/** The request for a channel: where it goes (the channel's URL, or PagerDuty's) and its JSON body. */
export function renderChannelRequest<Body>(
  renderers: ChannelRenderers<Body>,
  type: ChannelType,
  target: string,
  body: Body,
  links: ChannelLinks,
): { url: string; body: string } {
  if (type === 'pagerduty')
    return { url: links.pagerDutyEvents, body: JSON.stringify(renderers.pagerDuty(target, body, links)) };
  const message = type === 'slack' ? renderers.slack(body, links) : renderers.teams(body, links);
  return { url: target, body: JSON.stringify(message) };
}

/** A notification's request for a channel. */
export function channelRequest(
  type: ChannelType,
  target: string,
  body: NotificationBody,
  links: ChannelLinks,
): { url: string; body: string } {
  return renderChannelRequest(
    { slack: slackMessage, teams: teamsMessage, pagerDuty: pagerDutyEvent },
    type,
    target,
    body,
    links,
  );
}

/** A Teams Workflows message of one Adaptive Card: its blocks, and a button to the console. */
export function teamsCard(blocks: unknown[], action: { title: string; url: string }) {
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body: blocks,
    actions: [{ type: 'Action.OpenUrl', ...action }],
  };
  return {
    type: 'message',
    attachments: [
      { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card },
    ],
  };
}

function headline(body: NotificationBody): string {
  const subject = `${body.resource.kind === 'node' ? 'Node' : body.resource.kind === 'tunnel' ? 'Tunnel' : 'Service'} ${body.resource.name}`;
  return `${body.test ? '[Test] ' : ''}${body.display_type}: ${subject} is ${body.current_state}`;
}

/** The facts every message shows, in order. */
function facts(body: NotificationBody): [string, string][] {
  const change =
    body.previous_state === null ? body.current_state : `${body.previous_state} → ${body.current_state}`;
  return [
    ['Node', body.node.name],
    ['Organization', body.organization.name],
    ['State', change],
    ['Time', body.occurred_at],
    ...(body.alert === null ? [] : ([['Alert', body.alert.name]] as [string, string][])),
  ];
}

/** Slack's mrkdwn gives &, < and > a meaning of their own: names are escaped as its docs ask. */
const slackText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function slackMessage(body: NotificationBody, links: ChannelLinks) {
  return {
    text: slackText(`${headline(body)}. ${body.message}`),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: headline(body).slice(0, 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: slackText(body.message) } },
      {
        type: 'section',
        fields: facts(body).map(([title, value]) => ({
          type: 'mrkdwn',
          text: `*${title}*\n${slackText(value)}`,
        })),
      },
      {
        type: 'actions',
        elements: [
          { type: 'button', text: { type: 'plain_text', text: 'Open in edgewatch' }, url: links.console },
        ],
      },
    ],
  };
}

function teamsMessage(body: NotificationBody, links: ChannelLinks) {
  return teamsCard(
    [
      { type: 'TextBlock', size: 'Large', weight: 'Bolder', wrap: true, text: headline(body) },
      { type: 'TextBlock', wrap: true, text: body.message },
      { type: 'FactSet', facts: facts(body).map(([title, value]) => ({ title, value })) },
    ],
    { title: 'Open in edgewatch', url: links.console },
  );
}

function pagerDutyEvent(routingKey: string, body: NotificationBody, links: ChannelLinks) {
  // One incident per alert and resource: its trouble triggers it, its return to good resolves it.
  const dedupKey = `${body.alert?.id ?? 'test'}:${body.resource.id}`;
  return {
    routing_key: routingKey,
    event_action: resolvesIncident(body.condition) ? 'resolve' : 'trigger',
    dedup_key: dedupKey,
    payload: {
      summary: headline(body).slice(0, 1024),
      source: body.node.name,
      severity: pagerDutySeverity(body.condition),
      timestamp: body.occurred_at,
      component: body.resource.name,
      group: body.organization.name,
      class: body.type,
      custom_details: {
        message: body.message,
        condition: body.condition,
        previous_state: body.previous_state,
        current_state: body.current_state,
        sequence: body.sequence,
        organization_id: body.organization.id,
        node_id: body.node.id,
        resource: body.resource,
        event_id: body.id,
      },
    },
    links: [{ href: links.console, text: 'Open in edgewatch' }],
  };
}
