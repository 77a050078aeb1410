// The API reference: renders /openapi.json from this server, with no outside requests.
(function () {
  'use strict';
  var el = function (tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'class') node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  };
  var creds = ['key', 'user', 'account'];
  creds.forEach(function (name) {
    var input = document.getElementById('cred-' + name);
    input.value = sessionStorage.getItem('docs-' + name) || '';
    input.addEventListener('input', function () { sessionStorage.setItem('docs-' + name, input.value); });
  });
  var credential = function (name) { return document.getElementById('cred-' + name).value.trim(); };

  function resolve(doc, schema) {
    var seen = 0;
    while (schema && schema.$ref && seen++ < 10) {
      schema = schema.$ref.replace('#/', '').split('/').reduce(function (o, k) { return o && o[k]; }, doc);
    }
    return schema || {};
  }
  function typeOf(doc, schema) {
    schema = resolve(doc, schema);
    if (schema.enum) return schema.enum.map(function (v) { return JSON.stringify(v); }).join(' | ');
    if (schema.anyOf || schema.oneOf) return (schema.anyOf || schema.oneOf).map(function (s) { return typeOf(doc, s); }).join(' | ');
    if (schema.type === 'array') return typeOf(doc, schema.items) + '[]';
    var t = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type || 'any';
    var range = [];
    if (schema.minimum !== undefined && schema.minimum > -9e15) range.push('≥ ' + schema.minimum);
    if (schema.maximum !== undefined && schema.maximum < 9e15) range.push('≤ ' + schema.maximum);
    if (schema.minLength !== undefined) range.push('length ≥ ' + schema.minLength);
    if (schema.maxLength !== undefined) range.push('length ≤ ' + schema.maxLength);
    return t + (schema.format ? ' (' + schema.format + ')' : '') + (range.length ? ' ' + range.join(', ') : '');
  }
  function example(doc, schema, depth) {
    schema = resolve(doc, schema);
    if (depth > 6) return null;
    if (schema.example !== undefined) return schema.example;
    if (schema.default !== undefined) return schema.default;
    if (schema.enum) return schema.enum[0];
    if (schema.anyOf || schema.oneOf) return example(doc, (schema.anyOf || schema.oneOf)[0], depth + 1);
    var type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    if (type === 'object' || schema.properties) {
      var out = {};
      Object.keys(schema.properties || {}).forEach(function (k) { out[k] = example(doc, schema.properties[k], depth + 1); });
      return out;
    }
    if (type === 'array') return [example(doc, schema.items, depth + 1)];
    if (type === 'integer' || type === 'number') return schema.minimum > 0 ? schema.minimum : 0;
    if (type === 'boolean') return true;
    return 'string';
  }
  function propertiesTable(doc, schema) {
    schema = resolve(doc, schema);
    var props = schema.properties || {};
    var required = schema.required || [];
    var rows = Object.keys(props).map(function (name) {
      var p = resolve(doc, props[name]);
      return el('tr', {}, [el('td', {}, [el('code', { text: name })]), el('td', { text: typeOf(doc, p) }),
        el('td', { text: required.indexOf(name) >= 0 ? 'yes' : 'no' }), el('td', { text: p.description || '' })]);
    });
    if (!rows.length) return el('p', { class: 'muted', text: 'No members.' });
    return el('table', {}, [el('tr', {}, ['Name', 'Type', 'Required', 'Description'].map(function (h) { return el('th', { text: h }); }))].concat(rows));
  }

  function tryIt(doc, path, method, op) {
    var form = el('div', { class: 'try' });
    var params = (op.parameters || []).filter(function (p) { return p.in === 'path' || p.in === 'query'; });
    var inputs = {};
    params.forEach(function (p) {
      var input = el('input', { placeholder: typeOf(doc, p.schema) });
      inputs[p.name] = { param: p, input: input };
      form.appendChild(el('label', {}, [p.in + ' ' + p.name + (p.required ? ' (required)' : ''), input]));
    });
    var body = null;
    if (op.requestBody) {
      var schema = op.requestBody.content['application/json'].schema;
      body = el('textarea', {});
      body.value = JSON.stringify(example(doc, schema, 0), null, 2);
      form.appendChild(el('label', {}, ['JSON body', body]));
    }
    var out = el('pre', { class: 'try-output', text: '' });
    out.style.display = 'none';
    var send = el('button', { type: 'button', text: 'Send request' });
    send.addEventListener('click', function () {
      var url = '/api' + path;
      var query = new URLSearchParams();
      Object.keys(inputs).forEach(function (name) {
        var v = inputs[name].input.value;
        if (v === '') return;
        if (inputs[name].param.in === 'path') url = url.replace('{' + name + '}', encodeURIComponent(v));
        else query.append(name, v);
      });
      if (String(query)) url += '?' + query;
      var headers = {};
      if (credential('key')) headers['x-api-key'] = credential('key');
      if (credential('user')) headers['x-user-id'] = credential('user');
      if (credential('account')) headers['x-account-id'] = credential('account');
      var init = { method: method.toUpperCase(), headers: headers };
      if (body) { headers['content-type'] = 'application/json'; init.body = body.value; }
      out.style.display = 'block';
      out.textContent = 'Sending ' + init.method + ' ' + url + ' …';
      fetch(url, init).then(function (res) {
        return res.text().then(function (text) {
          var shown = ['x-request-id', 'x-request-cost-usd', 'ratelimit-remaining', 'retry-after']
            .filter(function (h) { return res.headers.get(h) !== null; })
            .map(function (h) { return h + ': ' + res.headers.get(h); });
          var pretty = text;
          try { pretty = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON */ }
          out.textContent = res.status + ' ' + res.statusText + '\n' + shown.join('\n') + '\n\n' + pretty;
        });
      }, function (err) { out.textContent = 'Request failed: ' + err; });
    });
    form.appendChild(send);
    form.appendChild(out);
    return el('details', {}, [el('summary', { text: 'Try it' }), form]);
  }

  function operationCard(doc, path, method, op) {
    var id = op.operationId || (method + path);
    var card = el('section', { class: 'card op', id: id });
    var auth = (op.security || []).map(function (s) { return Object.keys(s)[0]; });
    card.appendChild(el('h3', {}, [el('span', { class: 'method m-' + method, text: method.toUpperCase() }), '/api' + path,
      el('span', { class: 'badge', text: auth.length ? auth.join(' or ') : 'public' })]));
    if (op.summary) card.appendChild(el('p', { text: op.summary }));
    var params = op.parameters || [];
    if (params.length) {
      card.appendChild(el('h4', { text: 'Parameters' }));
      card.appendChild(el('table', {}, [el('tr', {}, ['Name', 'In', 'Type', 'Required', 'Description'].map(function (h) { return el('th', { text: h }); }))]
        .concat(params.map(function (p) {
          return el('tr', {}, [el('td', {}, [el('code', { text: p.name })]), el('td', { text: p.in }), el('td', { text: typeOf(doc, p.schema) }),
            el('td', { text: p.required ? 'yes' : 'no' }), el('td', { text: p.description || (p.schema && p.schema.description) || '' })]);
        }))));
    }
    if (op.requestBody) {
      card.appendChild(el('h4', { text: 'Request body (application/json)' }));
      card.appendChild(propertiesTable(doc, op.requestBody.content['application/json'].schema));
    }
    card.appendChild(el('h4', { text: 'Responses' }));
    Object.keys(op.responses || {}).forEach(function (status) {
      var r = op.responses[status];
      var schema = r.content && r.content['application/json'] && r.content['application/json'].schema;
      var headers = Object.keys(r.headers || {});
      card.appendChild(el('details', {}, [
        el('summary', {}, [el('span', { class: status < 400 ? 'status-ok' : 'status-err', text: status }), ' ' + (r.description || ''),
          headers.length ? el('span', { class: 'muted', text: '  headers: ' + headers.join(', ') }) : null]),
        schema ? propertiesTable(doc, schema) : null,
        schema ? el('pre', { text: JSON.stringify(example(doc, schema, 0), null, 2) }) : null,
      ]));
    });
    card.appendChild(tryIt(doc, path, method, op));
    return card;
  }

  fetch('/openapi.json').then(function (r) { return r.json(); }).then(function (doc) {
    document.title = doc.info.title + ' reference';
    var intro = document.getElementById('intro');
    intro.appendChild(el('h1', { text: doc.info.title + ' ' + doc.info.version }));
    doc.info.description.split('\n\n').forEach(function (para) { intro.appendChild(el('p', { text: para.replace(/\n/g, ' ') })); });
    var nav = document.getElementById('nav');
    nav.innerHTML = '';
    nav.appendChild(el('h1', { text: doc.info.title }));
    nav.appendChild(el('a', { href: '/openapi.json', text: 'openapi.json' }));
    var groups = {};
    var order = (doc.tags || []).map(function (t) { return t.name; });
    Object.keys(doc.paths).forEach(function (path) {
      Object.keys(doc.paths[path]).forEach(function (method) {
        var op = doc.paths[path][method];
        var tag = (op.tags && op.tags[0]) || 'Other';
        if (order.indexOf(tag) < 0) order.push(tag);
        (groups[tag] = groups[tag] || []).push({ path: path, method: method, op: op });
      });
    });
    var container = document.getElementById('operations');
    order.filter(function (tag) { return groups[tag]; }).forEach(function (tag) {
      var info = (doc.tags || []).filter(function (t) { return t.name === tag; })[0];
      var group = el('div', { class: 'tag-group', 'data-tag': tag }, [el('h2', { text: tag }), info && info.description ? el('p', { class: 'muted', text: info.description }) : null]);
      nav.appendChild(el('h3', { text: tag }));
      groups[tag].forEach(function (o) {
        group.appendChild(operationCard(doc, o.path, o.method, o.op));
        nav.appendChild(el('a', { href: '#' + (o.op.operationId || o.method + o.path) }, [el('span', { class: 'method m-' + o.method, text: o.method.toUpperCase() }), o.path]));
      });
      container.appendChild(group);
    });
    document.body.setAttribute('data-ready', 'true');
  }, function (err) {
    document.getElementById('nav').textContent = 'Could not load /openapi.json: ' + err;
  });
})();
